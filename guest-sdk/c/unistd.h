/*
 * weft's <unistd.h>: wasi-libc's, and `pause`, `alarm` and `ualarm`, which
 * wasi-libc leaves out because WASI has no signals. weft delivers the signals the program's
 * threads and its alarm send (guest-sdk/c/weft_signal.c).
 */
#ifndef WEFT_UNISTD_H
#define WEFT_UNISTD_H
#pragma GCC system_header

#include_next <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

int pause(void);
unsigned alarm(unsigned);
unsigned ualarm(unsigned, unsigned);

#ifdef __cplusplus
}
#endif

#endif
