/* A loop whose turns come again alike while storing what another thread
 * reads: the spinner writes 1 then 0 to `x` in every turn until stopped;
 * the observer reads `x` twice and fails if it saw the 1 and then the 0
 * (its reads fell on both sides of a turn's second store). A search that
 * took the spinner's alike turns as changing nothing would miss it. */
#include <assert.h>
#include <pthread.h>

static volatile int stop, x, seen;

static void *spinner(void *arg) {
    (void)arg;
    while (!stop) {
        x = 1;
        x = 0;
    }
    return 0;
}

static void *observer(void *arg) {
    (void)arg;
    int first = x;
    int second = x;
    if (first == 1 && second == 0)
        seen = 1;
    stop = 1;
    return 0;
}

int main(void) {
    pthread_t s, o;
    pthread_create(&s, 0, spinner, 0);
    pthread_create(&o, 0, observer, 0);
    pthread_join(s, 0);
    pthread_join(o, 0);
    assert(!seen);
    return 0;
}
