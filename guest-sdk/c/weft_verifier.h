/*
 * The verification conventions weft_verifier.c defines, declared for C
 * programs: `weft build` includes this header first in every C file, so
 * that old C that calls them without a declaration (legal before C99) calls
 * them with the signature they have, not with an implicit `int f()`, which
 * would link to a stub that traps. A program's own compatible declarations
 * and definitions (`void reach_error() { ... }`) still build.
 */
#ifndef WEFT_VERIFIER_H
#define WEFT_VERIFIER_H
#ifndef __cplusplus
#pragma GCC system_header
int __VERIFIER_nondet_int(void);
unsigned int __VERIFIER_nondet_uint(void);
char __VERIFIER_nondet_char(void);
unsigned char __VERIFIER_nondet_uchar(void);
short __VERIFIER_nondet_short(void);
unsigned short __VERIFIER_nondet_ushort(void);
long __VERIFIER_nondet_long(void);
unsigned long __VERIFIER_nondet_ulong(void);
unsigned long __VERIFIER_nondet_size_t(void);
long long __VERIFIER_nondet_longlong(void);
unsigned long long __VERIFIER_nondet_ulonglong(void);
void *__VERIFIER_nondet_pointer(void);
_Bool __VERIFIER_nondet_bool(void);
void __VERIFIER_assume(int cond);
void __VERIFIER_atomic_begin(void);
void __VERIFIER_atomic_end(void);
void assume_abort_if_not(int cond);
void reach_error(void);
void __VERIFIER_error(void);

#endif
#endif
