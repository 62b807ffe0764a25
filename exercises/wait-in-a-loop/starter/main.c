/* Wait in a loop: a writer thread publishes a report and a reader thread
 * waits for it. This program sometimes hangs.
 * Make publish() and wait_for_report() correct. Keep writer(), reader()
 * and main() as they are. */
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
    report = value;
    ready = 1;
    pthread_cond_signal(&published);
    pthread_mutex_unlock(&lock);
}

/* Returns the report once it is published. */
static int wait_for_report(void) {
    /* TODO: what if the report was published before this wait began? */
    pthread_mutex_lock(&lock);
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
