/*
 * The stack protector's canary and its failure, linked into every C and
 * C++ program ahead of wasi-libc's. wasi-libc sets its canary from random
 * bytes as a program starts (zig's libc++ is built with the stack
 * protector, so every C++ program pulls that in): weft would have to try
 * every draw of them before it could say it explored all schedules. Here
 * the canary is a constant, with a zero byte as a string overflow's end
 * would have it; a smashed stack is still caught, unless the overflow
 * writes that very value.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

uintptr_t __stack_chk_guard = (uintptr_t)0x5eed00f7u;

/* What wasi-libc's own start-up would call to set the canary: it stays. */
void __init_ssp(void *entropy)
{
    (void)entropy;
}

void __stack_chk_fail(void)
{
    fputs("*** stack smashing detected ***: the stack protector's canary was overwritten\n", stderr);
    abort();
}

__attribute__((__visibility__("hidden"), __alias__("__stack_chk_fail")))
void __stack_chk_fail_local(void);
