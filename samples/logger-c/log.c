#include "log.h"
#include "ring.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static struct {
    pthread_mutex_t lock;
    pthread_cond_t queued;  /* a record was queued, or stopping began */
    pthread_cond_t drained; /* a slot became free */
    struct ring ring;
    bool stopping;
    size_t written;
    log_sink sink;
    void *context;
    pthread_t writer;
} logger = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .queued = PTHREAD_COND_INITIALIZER,
    .drained = PTHREAD_COND_INITIALIZER,
};

/* Read on every call without the lock. */
static int min_level = LOG_INFO;

static void *write_records(void *arg) {
    (void)arg;
    char record[RECORD_LEN];
    pthread_mutex_lock(&logger.lock);
    for (;;) {
        while (ring_empty(&logger.ring) && !logger.stopping)
            pthread_cond_wait(&logger.queued, &logger.lock);
        if (ring_empty(&logger.ring))
            break; /* stopping, and everything is written */
        ring_take(&logger.ring, record);
        pthread_cond_signal(&logger.drained);
        pthread_mutex_unlock(&logger.lock);
        logger.sink(record, logger.context);
        pthread_mutex_lock(&logger.lock);
        logger.written++;
    }
    pthread_mutex_unlock(&logger.lock);
    return NULL;
}

int log_start(log_sink sink, void *context) {
    logger.sink = sink;
    logger.context = context;
    return pthread_create(&logger.writer, NULL, write_records, NULL);
}

void log_set_level(enum log_level level) {
    __atomic_store_n(&min_level, level, __ATOMIC_RELAXED);
}

void log_write(enum log_level level, const char *format, ...) {
    if ((int)level < __atomic_load_n(&min_level, __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&logger.lock);
    while (ring_full(&logger.ring))
        pthread_cond_wait(&logger.drained, &logger.lock);
    va_list args;
    va_start(args, format);
    vsnprintf(ring_reserve(&logger.ring), RECORD_LEN, format, args);
    va_end(args);
    pthread_cond_signal(&logger.queued);
    pthread_mutex_unlock(&logger.lock);
}

size_t log_stop(void) {
    pthread_mutex_lock(&logger.lock);
    logger.stopping = true;
    pthread_cond_signal(&logger.queued);
    pthread_mutex_unlock(&logger.lock);
    pthread_join(logger.writer, NULL);
    return logger.written;
}
