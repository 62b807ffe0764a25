/*
 * The verification conventions of C concurrency benchmarks, mapped to weft
 * (see guest-sdk/ABI.md). `weft build` links this file into every C program;
 * every definition is weak, so a program's own definitions win.
 */
#include <limits.h>

#include "weft.h"

#define WEFT_WEAK __attribute__((weak))

/* A nondeterministic value of a type whose range is [min, max]. Programs
 * usually narrow inputs with assumptions such as `0 < x && x < 100`, so
 * uniform 64-bit values would discard nearly every execution: half of the
 * values are small (-16..16), a quarter are the type's boundaries or 0/1/-1,
 * and a quarter are uniform (over the type's range when it has at most 2^16
 * values, so that `weft explore --strategy dpor` enumerates them all).
 * Every draw goes through weft_choose, so it is replayed exactly. */
static long long weft_nondet(long long min, long long max) {
    long long value;
    switch (weft_choose(4)) {
    case 0:
    case 1:
        value = (long long)weft_choose(33) - 16;
        break;
    case 2: {
        const long long edges[5] = {min, max, 0, 1, -1};
        value = edges[weft_choose(5)];
        break;
    }
    default: {
        /* A type of at most 2^16 values takes a value of its own range, so
         * that an exhaustive search can enumerate every one. */
        unsigned long long span = (unsigned long long)max - (unsigned long long)min;
        if (span < 65536)
            value = min + (long long)weft_choose(span + 1);
        else
            value = (long long)weft_choose(0);
    }
    }
    if (value < min || value > max) {
        unsigned long long span = (unsigned long long)max - (unsigned long long)min;
        unsigned long long offset = (unsigned long long)value;
        if (span != ~0ULL)
            offset %= span + 1;
        value = (long long)((unsigned long long)min + offset);
    }
    return value;
}

#define WEFT_NONDET(type, name, min, max) \
    WEFT_WEAK type __VERIFIER_nondet_##name(void) { return (type)weft_nondet(min, max); }

WEFT_NONDET(int, int, INT_MIN, INT_MAX)
WEFT_NONDET(unsigned int, uint, 0, UINT_MAX)
WEFT_NONDET(char, char, CHAR_MIN, CHAR_MAX)
WEFT_NONDET(unsigned char, uchar, 0, UCHAR_MAX)
WEFT_NONDET(short, short, SHRT_MIN, SHRT_MAX)
WEFT_NONDET(unsigned short, ushort, 0, USHRT_MAX)
WEFT_NONDET(long, long, LONG_MIN, LONG_MAX)
WEFT_NONDET(unsigned long, ulong, 0, ULONG_MAX)
WEFT_NONDET(long long, longlong, LLONG_MIN, LLONG_MAX)
WEFT_NONDET(unsigned long, size_t, 0, ULONG_MAX)

WEFT_WEAK unsigned long long __VERIFIER_nondet_ulonglong(void) { return weft_choose(0); }

WEFT_WEAK void *__VERIFIER_nondet_pointer(void) { return (void *)(unsigned long)weft_choose(0); }

WEFT_WEAK _Bool __VERIFIER_nondet_bool(void) { return (_Bool)weft_choose(2); }

WEFT_WEAK void __VERIFIER_assume(int cond) { weft_assume(cond); }

WEFT_WEAK void __VERIFIER_atomic_begin(void) { weft_atomic_begin(); }

WEFT_WEAK void __VERIFIER_atomic_end(void) { weft_atomic_end(); }

WEFT_WEAK void assume_abort_if_not(int cond) { weft_assume(cond); }

WEFT_WEAK void reach_error(void) { weft_assert(0, "reach_error() was reached"); }

WEFT_WEAK void __VERIFIER_error(void) { weft_assert(0, "__VERIFIER_error() was reached"); }
