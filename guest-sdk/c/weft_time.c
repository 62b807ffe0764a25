/*
 * `pause` and the real-time timer (`alarm`, `setitimer`), for weft's
 * signals (guest-sdk/c/weft_signal.c), which wasi-libc has not: the timer
 * rings on weft's virtual clock (`SIGALRM` to the process). Sleeps that a
 * signal cuts short are guest-sdk/c/weft_sleep.c's.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define WEFT_SIGNAL_IMPORT(name) \
    __attribute__((import_module("weft_signal"), import_name(name)))

/* Sets the alarm to ring in `value` ns (0: never), then every `interval`
 * ns (0: once); returns what was left of it before. */
WEFT_SIGNAL_IMPORT("alarm")
long long weft_signal_alarm(long long value, long long interval);
/* Nanoseconds until the alarm rings, or 0. */
WEFT_SIGNAL_IMPORT("alarm_left")
long long weft_signal_alarm_left(void);
/* The alarm's period in ns, or 0. */
WEFT_SIGNAL_IMPORT("alarm_interval")
long long weft_signal_alarm_interval(void);

#define NS_PER_S 1000000000LL

int pause(void)
{
    sigset_t mask;
    pthread_sigmask(SIG_BLOCK, NULL, &mask);
    return sigsuspend(&mask);
}

static long long ns_of(const struct timeval *time)
{
    return (long long)time->tv_sec * NS_PER_S + (long long)time->tv_usec * 1000;
}

static void set_time(struct timeval *time, long long ns)
{
    time->tv_sec = ns / NS_PER_S;
    time->tv_usec = (ns % NS_PER_S + 999) / 1000;
    if (time->tv_usec == 1000000) {
        time->tv_sec += 1;
        time->tv_usec = 0;
    }
}

int getitimer(int which, struct itimerval *value)
{
    if (which != ITIMER_REAL) {
        /* The other timers count the process's CPU time, which has no
         * meaning on weft's clock. */
        errno = EINVAL;
        return -1;
    }
    set_time(&value->it_value, weft_signal_alarm_left());
    set_time(&value->it_interval, weft_signal_alarm_interval());
    return 0;
}

int setitimer(int which, const struct itimerval *restrict value, struct itimerval *restrict old)
{
    if (which != ITIMER_REAL || value->it_value.tv_usec < 0 ||
        value->it_value.tv_usec >= 1000000 || value->it_interval.tv_usec < 0 ||
        value->it_interval.tv_usec >= 1000000 || value->it_value.tv_sec < 0 ||
        value->it_interval.tv_sec < 0) {
        errno = EINVAL;
        return -1;
    }
    long long interval = weft_signal_alarm_interval();
    long long left = weft_signal_alarm(ns_of(&value->it_value), ns_of(&value->it_interval));
    if (old) {
        set_time(&old->it_value, left);
        set_time(&old->it_interval, interval);
    }
    return 0;
}

unsigned alarm(unsigned seconds)
{
    struct itimerval value = {.it_value = {.tv_sec = seconds}}, old;
    setitimer(ITIMER_REAL, &value, &old);
    /* What was left, to the nearest second, and 1 rather than 0 when the
     * alarm was set (as Linux rounds it). */
    unsigned left = old.it_value.tv_sec + (old.it_value.tv_usec >= 500000);
    return left == 0 && old.it_value.tv_usec > 0 ? 1 : left;
}

unsigned ualarm(unsigned value, unsigned interval)
{
    struct itimerval timer = {
        .it_value = {.tv_sec = value / 1000000, .tv_usec = value % 1000000},
        .it_interval = {.tv_sec = interval / 1000000, .tv_usec = interval % 1000000},
    },
                     old;
    setitimer(ITIMER_REAL, &timer, &old);
    return old.it_value.tv_sec * 1000000 + old.it_value.tv_usec;
}
