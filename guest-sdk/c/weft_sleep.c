/*
 * Sleeps that a signal cuts short, for weft's signals
 * (guest-sdk/c/weft_signal.c): wasi-libc's `clock_nanosleep` turns any
 * error into `ENOTSUP` and its `sleep` returns all of its seconds. These
 * replace them, linked ahead of wasi-libc: the same `poll_oneoff` on weft's
 * virtual clock; when a signal's handler ran during the sleep, weft
 * returns `EINTR` and keeps what was left of it. wasi-libc's `nanosleep`
 * and `usleep` call this `clock_nanosleep`. This file names nothing of the
 * C library's (only WASI's and weft's imports), so that linking it ahead
 * of wasi-libc changes no program that does not sleep.
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <wasi/api.h>

/* WASI's `poll_oneoff`, called directly. */
__attribute__((import_module("wasi_snapshot_preview1"), import_name("poll_oneoff")))
int32_t weft_poll_oneoff(int32_t subscriptions, int32_t events, int32_t count, int32_t done);

/* Nanoseconds left of the calling thread's last sleep a signal cut short. */
__attribute__((import_module("weft_signal"), import_name("sleep_left")))
long long weft_signal_sleep_left(void);

#define NS_PER_S 1000000000LL

/* wasi-libc's clock: a `clockid_t` points at one of these. */
struct weft_clock {
    __wasi_clockid_t id;
};

/* Sleeps on clock `id` until `request` (from now, or at that time with
 * TIMER_ABSTIME); returns 0, EINVAL, EINTR (with what was left in `left`
 * for a relative sleep) or ENOTSUP. */
static int sleep_on(__wasi_clockid_t id, int flags, const struct timespec *request,
                    struct timespec *left)
{
    if ((flags & ~TIMER_ABSTIME) != 0)
        return EINVAL;
    if (request->tv_nsec < 0 || request->tv_nsec >= NS_PER_S)
        return EINVAL;
    __wasi_timestamp_t timeout = 0;
    if (request->tv_sec > 0) {
        timeout = (uint64_t)request->tv_sec > (UINT64_MAX - request->tv_nsec) / NS_PER_S
                      ? UINT64_MAX
                      : (uint64_t)request->tv_sec * NS_PER_S + request->tv_nsec;
    } else if (request->tv_sec == 0) {
        timeout = request->tv_nsec;
    }
    __wasi_subscription_t sub = {
        .u.tag = __WASI_EVENTTYPE_CLOCK,
        .u.u.clock.id = id,
        .u.u.clock.timeout = timeout,
        .u.u.clock.flags = flags & TIMER_ABSTIME ? __WASI_SUBCLOCKFLAGS_SUBSCRIPTION_CLOCK_ABSTIME : 0,
    };
    __wasi_event_t event;
    __wasi_size_t events;
    int32_t error = weft_poll_oneoff((int32_t)(intptr_t)&sub, (int32_t)(intptr_t)&event, 1,
                                     (int32_t)(intptr_t)&events);
    if (error == __WASI_ERRNO_INTR) {
        if (left && !(flags & TIMER_ABSTIME)) {
            long long ns = weft_signal_sleep_left();
            left->tv_sec = ns / NS_PER_S;
            left->tv_nsec = ns % NS_PER_S;
        }
        return EINTR;
    }
    return error == 0 && event.error == 0 ? 0 : ENOTSUP;
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *request,
                    struct timespec *left)
{
    return sleep_on(((const struct weft_clock *)clock)->id, flags, request, left);
}

unsigned sleep(unsigned seconds)
{
    struct timespec request = {.tv_sec = seconds, .tv_nsec = 0}, left;
    if (sleep_on(__WASI_CLOCKID_REALTIME, 0, &request, &left) == EINTR)
        return left.tv_sec + (left.tv_nsec > 0);
    return 0;
}
