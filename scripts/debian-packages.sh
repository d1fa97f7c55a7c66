#!/bin/sh
# The Debian packages guiagent needs, listed once. The container image
# (Dockerfile) installs the runtime set; CI (.ci/run) installs the ci set,
# which contains the runtime set, so every CI run goes through the image's
# install path.
#
# Usage: scripts/debian-packages.sh list|install runtime|ci
set -eu

# runtime: a private virtual display (Xvfb), fonts for Latin and CJK text in
# the applications it shows, and CA certificates for HTTPS model providers.
runtime="xvfb fonts-dejavu-core fonts-wqy-microhei ca-certificates"

# ci: the runtime set, plus the X servers, tools and applications the tests
# drive (PyYAML as a second YAML writer for flow caches, Xorg dummy, Xvnc,
# xdpyinfo/xrandr, Chromium for report tests, Wine and mingw-w64 for the
# Windows backend tests, Tesseract with English and Tk for the OCR tests;
# for the accessibility tests a D-Bus session bus, at-spi2-core, the GTK 3
# test application (python3-gi, gir1.2-gtk-3.0), pyatspi as their oracle,
# zenity and gtk3-widget-factory from gtk-3-examples; for the Wayland and
# desktop portal backends a headless sway with swaybg, grim (the oracle),
# wl-clipboard and foot, cairo for the GTK test application's drawing
# (python3-gi-cairo), PipeWire (xdg-desktop-portal-wlr will not start
# without it), xdg-desktop-portal and xdg-desktop-portal-wlr); for the
# Android backend the real adb server between guiagent and the fake device.
# Wine loads the X extension libraries it uses (XRandR for monitors and DPI,
# XInput2, ...) at run time, and libwine only recommends them, so they are
# listed with its fonts.
ci="$runtime python3-yaml x11-utils x11-xserver-utils xserver-xorg-core xserver-xorg-video-dummy tigervnc-standalone-server tigervnc-tools chromium wine wine64 gcc-mingw-w64-x86-64 libxrandr2 libxi6 libxinerama1 libxcursor1 libxrender1 libxfixes3 libxcomposite1 libxxf86vm1 fonts-wine tesseract-ocr tesseract-ocr-eng tk dbus-daemon dbus-x11 at-spi2-core python3-gi gir1.2-gtk-3.0 gir1.2-atspi-2.0 python3-pyatspi zenity gtk-3-examples sway swaybg grim pipewire-bin xdg-desktop-portal xdg-desktop-portal-wlr wl-clipboard foot python3-gi-cairo adb"

usage() {
	echo "usage: $0 list|install runtime|ci" >&2
	exit 2
}

[ $# -eq 2 ] || usage
case "$2" in
runtime) pkgs=$runtime ;;
ci) pkgs=$ci ;;
*) usage ;;
esac

case "$1" in
list)
	for p in $pkgs; do echo "$p"; done
	;;
install)
	missing=""
	for p in $pkgs; do
		dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		# shellcheck disable=SC2086 # one word per package
		apt-get install -y -qq --no-install-recommends $missing >/dev/null
	fi
	# Every package must now be installed: a failed install fails here.
	for p in $pkgs; do
		if ! dpkg -s "$p" >/dev/null 2>&1; then
			echo "$0: $p is not installed" >&2
			exit 1
		fi
	done
	echo "debian packages ($2): all installed"
	;;
*) usage ;;
esac
