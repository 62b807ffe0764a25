/* Threads that log to one shared FILE (a memory stream: weft gives a
 * program no file system) with fprintf, fputs and perror, and count their
 * lines under a lock; main reads the log back. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 3

static FILE *log_file;
static char *log_text;
static size_t log_size;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static int lines_logged;

static void *logger(void *arg)
{
    int id = *(int *)arg;
    for (int i = 0; i < 2; i++) {
        fprintf(log_file, "thread %d: entry %d\n", id, i);
        pthread_mutex_lock(&count_lock);
        lines_logged++;
        pthread_mutex_unlock(&count_lock);
    }
    fputs("thread finished\n", log_file);
    errno = ENOENT;
    perror("a harmless message");
    fprintf(stderr, "thread %d says %s\n", id, strerror(EAGAIN));
    return NULL;
}

int main(void)
{
    log_file = open_memstream(&log_text, &log_size);
    if (!log_file) {
        perror("open_memstream");
        return 1;
    }
    pthread_t threads[THREADS];
    int ids[THREADS];
    for (int i = 0; i < THREADS; i++) {
        ids[i] = i;
        pthread_create(&threads[i], NULL, logger, &ids[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    fclose(log_file);
    FILE *in = fmemopen(log_text, log_size, "r");
    char line[64];
    int read_back = 0;
    while (fgets(line, sizeof line, in))
        read_back++;
    fclose(in);
    free(log_text);
    printf("%d lines counted, %d read back\n", lines_logged, read_back);
    return lines_logged == 6 && read_back == 9 ? 0 : 1;
}
