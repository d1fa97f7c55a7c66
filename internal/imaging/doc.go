// Package imaging is guiagent's screenshot pipeline: capture a display region at
// physical resolution, resample it in one step to the size a model profile wants,
// pad it when the profile pads, encode it (a parallel baseline JPEG encoder, or
// PNG) within a byte budget, and describe the result with the exact geom.Frame
// the resolver needs. It also provides 32x32 thumbnails and their difference for
// settle and stuck detection, and template matching for gui_find_image.
//
// All image sizes are in pixels; Frame.Region is in global logical pixels.
package imaging
