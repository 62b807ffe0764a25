/* Wrong: the reader waits in a loop, but the writer signals before it
 * publishes. A reader woken by that signal finds nothing, waits again, and
 * no second signal comes. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t published = PTHREAD_COND_INITIALIZER;
static int ready = 0;
static int report = 0;

/* Makes `value` the report and wakes the reader if it waits. */
static void publish(int value) {
    pthread_mutex_lock(&lock);
    pthread_cond_signal(&published);
    pthread_mutex_unlock(&lock);
    pthread_mutex_lock(&lock);
    report = value;
    ready = 1;
    pthread_mutex_unlock(&lock);
}

/* Returns the report once it is published. */
static int wait_for_report(void) {
    pthread_mutex_lock(&lock);
    while (!ready)
        pthread_cond_wait(&published, &lock);
    int value = report;
    pthread_mutex_unlock(&lock);
    return value;
}

static void *writer(void *arg) {
    (void)arg;
    publish(42);
    return NULL;
}

static void *reader(void *arg) {
    int *seen = arg;
    *seen = wait_for_report();
    return NULL;
}

int main(void) {
    static int seen;
    pthread_t w, r;
    pthread_create(&r, NULL, reader, &seen);
    pthread_create(&w, NULL, writer, NULL);
    pthread_join(w, NULL);
    pthread_join(r, NULL);
    printf("the reader saw %d\n", seen);
    assert(seen == 42 && "the reader saw no report");
    return 0;
}
