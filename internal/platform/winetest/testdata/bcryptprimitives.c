/*
 * A stand-in bcryptprimitives.dll for Wine 8.0, which lacks ProcessPrng: the
 * Go runtime (1.22 and later) imports it at start-up, so without it no Go
 * program for Windows starts under Wine. ProcessPrng fills the buffer with
 * random bytes from RtlGenRandom (advapi32's SystemFunction036) and, like
 * Windows' own, always succeeds or does not return.
 *
 * Built by the tests with: x86_64-w64-mingw32-gcc -shared -o bcryptprimitives.dll bcryptprimitives.c -ladvapi32
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG n = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, n))
            ExitProcess(0xC0000001); /* Windows' ProcessPrng never fails */
        data += n;
        length -= n;
    }
    return TRUE;
}
