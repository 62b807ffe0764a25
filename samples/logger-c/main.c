/* Two threads log three records each through a ring of four slots while
 * main raises the level; every record logged at WARN is written, each
 * thread's in the order it logged them. */
#include "log.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define PER_THREAD 3

/* Only the logger's writer thread calls the sink. */
static int last_seen[2] = {-1, -1};
static int lines;

static void check_line(const char *line, void *context) {
    (void)context;
    int who, seq;
    int fields = sscanf(line, "worker %d: record %d", &who, &seq);
    assert(fields == 2 && (who == 0 || who == 1));
    assert(seq > last_seen[who]); /* each thread's records in order */
    last_seen[who] = seq;
    lines++;
}

static void *worker(void *arg) {
    int who = *(int *)arg;
    for (int seq = 0; seq < PER_THREAD; seq++)
        log_write(LOG_WARN, "worker %d: record %d", who, seq);
    log_write(LOG_DEBUG, "worker %d: never written", who);
    return NULL;
}

int main(void) {
    int ids[2] = {0, 1};
    pthread_t threads[2];
    int started = log_start(check_line, NULL);
    assert(started == 0);
    for (int i = 0; i < 2; i++)
        pthread_create(&threads[i], NULL, worker, &ids[i]);
    log_set_level(LOG_WARN);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    size_t written = log_stop();
    printf("%zu records written\n", written);
    assert(written == 2 * PER_THREAD && lines == 2 * PER_THREAD);
    assert(last_seen[0] == PER_THREAD - 1 && last_seen[1] == PER_THREAD - 1);
    return 0;
}
