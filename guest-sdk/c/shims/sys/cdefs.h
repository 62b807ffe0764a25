/*
 * <sys/cdefs.h> for weft's C and C++ builds: wasi-libc (musl) has none,
 * and programs written for glibc or the BSDs include it for its macros.
 * Every macro here only spells an attribute or a declaration the compiler
 * understands itself; none changes what a program does. `weft build` and
 * `weft cc` find this header after the C library's own.
 */
#ifndef WEFT_SYS_CDEFS_H
#define WEFT_SYS_CDEFS_H

#ifdef __cplusplus
#define __BEGIN_DECLS extern "C" {
#define __END_DECLS }
#define __THROW noexcept(true)
#else
#define __BEGIN_DECLS
#define __END_DECLS
#define __THROW
#endif
#define __THROWNL __THROW
#define __NTH(fct) fct __THROW
#define __LEAF
#define __LEAF_ATTR

/* Old-style prototypes and token pasting. */
#define __P(args) args
#define __PMT(args) args
#define __CONCAT(x, y) x##y
#define __STRING(x) #x
#define __XSTRING(x) __STRING(x)
#define __ptr_t void *

/* Compiler versions. */
#define __GNUC_PREREQ(major, minor) \
    ((__GNUC__ << 16) + __GNUC_MINOR__ >= ((major) << 16) + (minor))
#define __glibc_clang_prereq(major, minor) \
    ((__clang_major__ << 16) + __clang_minor__ >= ((major) << 16) + (minor))
#define __glibc_has_attribute(attr) __has_attribute(attr)
#define __glibc_has_builtin(name) __has_builtin(name)

/* Attributes, as glibc spells them. */
#define __attribute_pure__ __attribute__((__pure__))
#define __attribute_const__ __attribute__((__const__))
#define __attribute_malloc__ __attribute__((__malloc__))
#define __attribute_noinline__ __attribute__((__noinline__))
#define __attribute_used__ __attribute__((__used__))
#define __attribute_deprecated__ __attribute__((__deprecated__))
#define __attribute_format_arg__(x) __attribute__((__format_arg__(x)))
#define __attribute_warn_unused_result__ __attribute__((__warn_unused_result__))
#define __attribute_maybe_unused__ __attribute__((__unused__))
#define __nonnull(params) __attribute__((__nonnull__ params))
#define __returns_nonnull __attribute__((__returns_nonnull__))
#define __wur __attribute__((__warn_unused_result__))
#ifndef __always_inline
#define __always_inline __inline __attribute__((__always_inline__))
#endif
#define __glibc_likely(cond) __builtin_expect((cond), 1)
#define __glibc_unlikely(cond) __builtin_expect((cond), 0)
#define __flexarr []
#define __restrict_arr

/* Attributes, as the BSDs spell them. */
#define __dead2 __attribute__((__noreturn__))
#define __pure2 __attribute__((__const__))
#define __packed __attribute__((__packed__))
#define __aligned(x) __attribute__((__aligned__(x)))
#define __printflike(fmt, args) __attribute__((__format__(__printf__, fmt, args)))
#define __scanflike(fmt, args) __attribute__((__format__(__scanf__, fmt, args)))
#define __predict_true(cond) __builtin_expect(!!(cond), 1)
#define __predict_false(cond) __builtin_expect(!!(cond), 0)
#define __containerof(ptr, type, field) \
    ((type *)((char *)(ptr) - __builtin_offsetof(type, field)))

/* Version strings the BSDs put in object files: a harmless declaration. */
#define __IDSTRING(name, string) struct __weft_idstring
#define __FBSDID(string) __IDSTRING(, string)
#define __RCSID(string) __IDSTRING(, string)
#define __COPYRIGHT(string) __IDSTRING(, string)
#define __SCCSID(string) __IDSTRING(, string)

#endif
