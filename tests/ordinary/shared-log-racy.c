/* shared-log.c with the line count updated outside its lock. */
#include <pthread.h>
#include <stdio.h>

#define THREADS 3

static FILE *log_file;
static char *log_text;
static size_t log_size;
static int lines_logged;

static void *logger(void *arg)
{
    int id = *(int *)arg;
    for (int i = 0; i < 2; i++) {
        fprintf(log_file, "thread %d: entry %d\n", id, i);
        lines_logged++; /* RACE on lines_logged */
    }
    return NULL;
}

int main(void)
{
    log_file = open_memstream(&log_text, &log_size);
    if (!log_file)
        return 1;
    pthread_t threads[THREADS];
    int ids[THREADS];
    for (int i = 0; i < THREADS; i++) {
        ids[i] = i;
        pthread_create(&threads[i], NULL, logger, &ids[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    fclose(log_file);
    printf("%d lines\n", lines_logged);
    return 0;
}
