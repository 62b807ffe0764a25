/*
 * Workers leave through pthread_exit from deep inside their work, with
 * cleanup handlers pushed and thread-specific data set; main collects their
 * results, then leaves through pthread_exit too while a detached reporter
 * still runs. Correct: every result, handler and destructor is accounted
 * for, whatever the interleaving.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define WORKERS 3

static pthread_key_t scratch_key;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int handlers_run;
static int scratch_freed;
static int reports;

static void free_scratch(void *buffer) {
    free(buffer);
    pthread_mutex_lock(&lock);
    scratch_freed++;
    pthread_mutex_unlock(&lock);
}

static void note_handler(void *unused) {
    (void)unused;
    pthread_mutex_lock(&lock);
    handlers_run++;
    pthread_mutex_unlock(&lock);
}

/* Finds the result `depth` calls down and leaves the thread from there. */
static void search(long id, int depth) {
    if (depth == 0)
        pthread_exit((void *)(id * 10));
    search(id, depth - 1);
}

static void *worker(void *arg) {
    long id = (long)arg;
    pthread_setspecific(scratch_key, malloc(16));
    pthread_cleanup_push(note_handler, NULL);
    search(id, (int)id + 2);
    pthread_cleanup_pop(0);
    return NULL;
}

static void *reporter(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lock);
    reports++;
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(void) {
    pthread_key_create(&scratch_key, free_scratch);
    pthread_t workers[WORKERS];
    for (long i = 0; i < WORKERS; i++)
        pthread_create(&workers[i], NULL, worker, (void *)i);
    for (long i = 0; i < WORKERS; i++) {
        void *result;
        pthread_join(workers[i], &result);
        assert((long)result == i * 10);
    }
    pthread_mutex_lock(&lock);
    assert(handlers_run == WORKERS);
    assert(scratch_freed == WORKERS);
    pthread_mutex_unlock(&lock);

    pthread_attr_t detached;
    pthread_attr_init(&detached);
    pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
    pthread_t report;
    pthread_create(&report, &detached, reporter, NULL);
    printf("workers done\n");
    pthread_exit(NULL);
}
