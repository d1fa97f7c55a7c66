package windows

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	win "golang.org/x/sys/windows"
)

// Minimal COM for UI Automation: vtable calls on the interfaces the element
// source uses, by slot number (UIAutomationClient.h order), no cgo.

var (
	ole32    = win.NewLazySystemDLL("ole32.dll")
	oleaut32 = win.NewLazySystemDLL("oleaut32.dll")

	procCoInitializeEx   = ole32.NewProc("CoInitializeEx")
	procCoUninitialize   = ole32.NewProc("CoUninitialize")
	procCoCreateInstance = ole32.NewProc("CoCreateInstance")
	procSysAllocString   = oleaut32.NewProc("SysAllocString")
	procSysFreeString    = oleaut32.NewProc("SysFreeString")
	procSysStringLen     = oleaut32.NewProc("SysStringLen")
	procVariantClear     = oleaut32.NewProc("VariantClear")
)

var (
	clsidCUIAutomation     = win.GUID{Data1: 0xff48dba4, Data2: 0x60ef, Data3: 0x4201, Data4: [8]byte{0xaa, 0x87, 0x54, 0x10, 0x3e, 0xef, 0x59, 0x4e}}
	iidIUIAutomation       = win.GUID{Data1: 0x30cbe57d, Data2: 0xd9d0, Data3: 0x452a, Data4: [8]byte{0xab, 0x13, 0x7a, 0xc5, 0xac, 0x48, 0x25, 0xee}}
	iidValuePattern        = win.GUID{Data1: 0xa94cd8b1, Data2: 0x0844, Data3: 0x4cd6, Data4: [8]byte{0x9d, 0x2d, 0x64, 0x05, 0x37, 0xab, 0x39, 0xe9}}
	iidInvokePattern       = win.GUID{Data1: 0xfb377fbe, Data2: 0x8ea6, Data3: 0x46d5, Data4: [8]byte{0x9c, 0x73, 0x64, 0x99, 0x64, 0x2d, 0x30, 0x59}}
	errNoUIAutomation      = errors.New("UI Automation is not available (CoCreateInstance CUIAutomation failed; Windows 7 and later have it, Wine 8 does not)")
	coinitMultithreaded    = uintptr(0)
	clsctxInprocServer     = uintptr(1)
	rpcEChangedMode        = uint32(0x80010106)
	treeScopeElement       = uintptr(1)
	treeScopeChildren      = uintptr(2)
	patternIDInvoke        = uintptr(10000)
	patternIDValue         = uintptr(10002)
	uiaNotSupportedVariant = uint16(13) // VT_UNKNOWN: UiaGetReservedNotSupportedValue
)

// UIA property ids (UIAutomationClient.h).
const (
	propBoundingRectangle = 30001
	propProcessID         = 30002
	propControlType       = 30003
	propName              = 30005
	propHasKeyboardFocus  = 30008
	propIsEnabled         = 30010
	propIsPassword        = 30019
	propNativeWindow      = 30020
	propIsOffscreen       = 30022
	propValueValue        = 30045
	propValueIsReadOnly   = 30046
	propRangeValueValue   = 30047
	propExpandCollapse    = 30070
	propSelectionSelected = 30079
	propToggleState       = 30086
	propIsValueAvailable  = 30043
	propIsRangeAvailable  = 30033
)

// cachedProps are the properties every fetch caches.
var cachedProps = []uintptr{propBoundingRectangle, propProcessID, propControlType, propName, propHasKeyboardFocus,
	propIsEnabled, propIsPassword, propNativeWindow, propIsOffscreen, propValueValue, propValueIsReadOnly, propRangeValueValue,
	propExpandCollapse, propSelectionSelected, propToggleState, propIsValueAvailable, propIsRangeAvailable}

// comObj is a COM interface pointer: its first word is the vtable.
type comObj struct{ vtbl *[128]uintptr }

// call calls vtable slot i of o with o as the first argument and returns the HRESULT.
func (o *comObj) call(i int, args ...uintptr) uintptr {
	r, _, _ := syscall.SyscallN(o.vtbl[i], append([]uintptr{uintptr(unsafe.Pointer(o))}, args...)...)
	return r
}

func (o *comObj) release() {
	if o != nil {
		o.call(2)
	}
}

func hresult(what string, hr uintptr) error {
	if int32(hr) >= 0 {
		return nil
	}
	return fmt.Errorf("UI Automation %s: HRESULT %#08x", what, uint32(hr))
}

// variant is VARIANT (24 bytes on 64-bit Windows).
type variant struct {
	VT        uint16
	_         [3]uint16
	Val, Val2 uintptr
}

func (v *variant) clear() { procVariantClear.Call(uintptr(unsafe.Pointer(v))) }

const (
	vtI4      = 3
	vtR8      = 5
	vtBSTR    = 8
	vtBool    = 11
	vtR8Array = 0x2000 | vtR8
)

// bstr is a BSTR: a pointer to UTF-16 with its length before it.
type bstr = *uint16

func bstrString(b bstr) string {
	if b == nil {
		return ""
	}
	n, _, _ := procSysStringLen.Call(uintptr(unsafe.Pointer(b)))
	return win.UTF16ToString(unsafe.Slice(b, n))
}

func newBSTR(s string) (bstr, error) {
	p, err := win.UTF16PtrFromString(s)
	if err != nil {
		return nil, fmt.Errorf("the value has a NUL character: %w", err)
	}
	var b bstr
	r, _, _ := syscall.SyscallN(procSysAllocString.Addr(), uintptr(unsafe.Pointer(p)))
	*(*uintptr)(unsafe.Pointer(&b)) = r
	if b == nil {
		return nil, fmt.Errorf("SysAllocString failed")
	}
	return b, nil
}

func freeBSTR(b bstr) { procSysFreeString.Call(uintptr(unsafe.Pointer(b))) }

// variantBSTR is the BSTR of a VT_BSTR variant.
func (v *variant) bstr() bstr { return *(*bstr)(unsafe.Pointer(&v.Val)) }

// safeArray is the head of a SAFEARRAY of one dimension.
type safeArray struct {
	Dims     uint16
	Features uint16
	Elem     uint32
	Locks    uint32
	Data     *float64 // the one element type read here
	Count    uint32
	Lower    int32
}

// uia is one IUIAutomation on the calling (COM-initialized) thread.
type uia struct {
	auto, cache, cond *comObj
}

// initCOM initializes COM (multithreaded, as UIA clients should) on the
// calling thread, which must be locked; done undoes it.
func initCOM() (done func(), err error) {
	hr, _, _ := procCoInitializeEx.Call(0, coinitMultithreaded)
	if int32(hr) < 0 && uint32(hr) != rpcEChangedMode { // an HRESULT is 32 bits of the register
		return nil, hresult("CoInitializeEx", hr)
	}
	return func() {
		if int32(hr) >= 0 {
			procCoUninitialize.Call()
		}
	}, nil
}

// newUIA creates the automation object, a cache request for cachedProps
// and the true condition.
func newUIA() (*uia, error) {
	if err := procCoCreateInstance.Find(); err != nil {
		return nil, fmt.Errorf("%w: %v", errNoUIAutomation, err)
	}
	u := &uia{}
	hr, _, _ := procCoCreateInstance.Call(uintptr(unsafe.Pointer(&clsidCUIAutomation)), 0, clsctxInprocServer,
		uintptr(unsafe.Pointer(&iidIUIAutomation)), uintptr(unsafe.Pointer(&u.auto)))
	if int32(hr) < 0 || u.auto == nil {
		// Wine 8.0 neither registers CUIAutomation nor implements
		// uiautomationcore's DllGetClassObject (a stub that aborts the
		// process): never call it, report the failure.
		return nil, fmt.Errorf("%w: HRESULT %#08x", errNoUIAutomation, uint32(hr))
	}
	if err := hresult("CreateCacheRequest", u.auto.call(20, uintptr(unsafe.Pointer(&u.cache)))); err != nil {
		u.release()
		return nil, err
	}
	for _, p := range cachedProps {
		if err := hresult("CacheRequest.AddProperty", u.cache.call(3, p)); err != nil {
			u.release()
			return nil, err
		}
	}
	u.cache.call(7, treeScopeElement)
	if err := hresult("CreateTrueCondition", u.auto.call(21, uintptr(unsafe.Pointer(&u.cond)))); err != nil {
		u.release()
		return nil, err
	}
	return u, nil
}

func (u *uia) release() {
	u.cond.release()
	u.cache.release()
	u.auto.release()
}

// fromHandle returns the element of a window with its properties cached.
func (u *uia) fromHandle(hwnd uintptr, cached bool) (*comObj, error) {
	var e *comObj
	var hr uintptr
	if cached {
		hr = u.auto.call(10, hwnd, uintptr(unsafe.Pointer(u.cache)), uintptr(unsafe.Pointer(&e))) // ElementFromHandleBuildCache
	} else {
		hr = u.auto.call(6, hwnd, uintptr(unsafe.Pointer(&e))) // ElementFromHandle
	}
	if err := hresult("ElementFromHandle", hr); err != nil {
		return nil, err
	}
	if e == nil {
		return nil, fmt.Errorf("UI Automation has no element for window %#x", hwnd)
	}
	return e, nil
}

// root returns the desktop's root element.
func (u *uia) root() (*comObj, error) {
	var e *comObj
	if err := hresult("GetRootElement", u.auto.call(5, uintptr(unsafe.Pointer(&e)))); err != nil {
		return nil, err
	}
	if e == nil {
		return nil, fmt.Errorf("UI Automation has no root element")
	}
	return e, nil
}

// children returns e's children, each with its properties cached (one
// cross-process call for all of them), at most limit; cached false fetches
// them without a cache (to resolve a handle).
func (u *uia) children(e *comObj, limit int, cached bool) ([]*comObj, error) {
	var arr *comObj
	var hr uintptr
	if cached {
		hr = e.call(8, treeScopeChildren, uintptr(unsafe.Pointer(u.cond)), uintptr(unsafe.Pointer(u.cache)), uintptr(unsafe.Pointer(&arr))) // FindAllBuildCache
	} else {
		hr = e.call(6, treeScopeChildren, uintptr(unsafe.Pointer(u.cond)), uintptr(unsafe.Pointer(&arr))) // FindAll
	}
	if err := hresult("FindAll children", hr); err != nil {
		return nil, err
	}
	if arr == nil {
		return nil, nil
	}
	defer arr.release()
	var n int32
	if err := hresult("ElementArray.Length", arr.call(3, uintptr(unsafe.Pointer(&n)))); err != nil {
		return nil, err
	}
	out := make([]*comObj, 0, min(int(n), limit))
	for i := 0; i < int(n) && i < limit; i++ {
		var k *comObj
		if err := hresult("ElementArray.GetElement", arr.call(4, uintptr(i), uintptr(unsafe.Pointer(&k)))); err != nil || k == nil {
			for _, o := range out {
				o.release()
			}
			return nil, fmt.Errorf("UI Automation element %d of %d: %v", i, n, err)
		}
		out = append(out, k)
	}
	return out, nil
}

// cachedProp reads one cached property of e into v (cleared by the caller).
func cachedProp(e *comObj, id uintptr, v *variant) bool {
	*v = variant{}
	// GetCachedPropertyValueEx, ignoring defaults: a pattern the element
	// lacks reads as not supported, not as its default (ToggleState Off).
	hr := e.call(13, id, 1, uintptr(unsafe.Pointer(v)))
	return int32(hr) >= 0 && v.VT != uiaNotSupportedVariant
}

// props reads e's cached properties.
func props(e *comObj) uiaProps {
	p := uiaProps{Toggle: patternUnsupported, Expand: patternUnsupported}
	var v variant
	i4 := func(id uintptr) (int, bool) {
		defer v.clear()
		if cachedProp(e, id, &v) && v.VT == vtI4 {
			return int(int32(v.Val)), true
		}
		return 0, false
	}
	boolean := func(id uintptr) (bool, bool) {
		defer v.clear()
		if cachedProp(e, id, &v) && v.VT == vtBool {
			return int16(v.Val) != 0, true
		}
		return false, false
	}
	str := func(id uintptr) string {
		defer v.clear()
		if cachedProp(e, id, &v) && v.VT == vtBSTR {
			return bstrString(v.bstr())
		}
		return ""
	}
	p.ControlType, _ = i4(propControlType)
	p.PID, _ = i4(propProcessID)
	if h, ok := i4(propNativeWindow); ok {
		p.HWND = uintptr(uint32(h))
	}
	p.Name = str(propName)
	p.Enabled, _ = boolean(propIsEnabled)
	p.Focused, _ = boolean(propHasKeyboardFocus)
	p.Offscreen, _ = boolean(propIsOffscreen)
	p.Password, _ = boolean(propIsPassword)
	if p.HasValue, _ = boolean(propIsValueAvailable); p.HasValue {
		p.Value = str(propValueValue)
		p.ReadOnly, _ = boolean(propValueIsReadOnly)
	}
	if p.HasRange, _ = boolean(propIsRangeAvailable); p.HasRange {
		if cachedProp(e, propRangeValueValue, &v) && v.VT == vtR8 {
			p.Range = *(*float64)(unsafe.Pointer(&v.Val))
		}
		v.clear()
	}
	if t, ok := i4(propToggleState); ok {
		p.Toggle = t
	}
	if x, ok := i4(propExpandCollapse); ok {
		p.Expand = x
	}
	p.Selected, p.HasSelected = boolean(propSelectionSelected)
	p.Rect = rectProp(e, &v)
	return p
}

// rectProp reads the cached BoundingRectangle: a SAFEARRAY of four doubles
// (left, top, width, height) in physical pixels.
func rectProp(e *comObj, v *variant) physRect {
	defer v.clear()
	if !cachedProp(e, propBoundingRectangle, v) || v.VT != vtR8Array || v.Val == 0 {
		return physRect{}
	}
	sa := *(**safeArray)(unsafe.Pointer(&v.Val))
	if sa.Count < 4 || sa.Data == nil {
		return physRect{}
	}
	d := unsafe.Slice(sa.Data, 4)
	return physRect{X: int(d[0]), Y: int(d[1]), W: int(d[2] + 0.5), H: int(d[3] + 0.5)}
}

// pattern returns e's pattern id as the interface iid, nil when e has none.
func pattern(e *comObj, id uintptr, iid *win.GUID) *comObj {
	var p *comObj
	hr := e.call(14, id, uintptr(unsafe.Pointer(iid)), uintptr(unsafe.Pointer(&p))) // GetCurrentPatternAs
	if int32(hr) < 0 {
		return nil
	}
	return p
}

// currentControlType is e's control type, read now.
func currentControlType(e *comObj) int {
	var ct int32
	e.call(21, uintptr(unsafe.Pointer(&ct))) // get_CurrentControlType
	return int(ct)
}

func bstrOut(p *bstr) uintptr { return uintptr(unsafe.Pointer(p)) }
