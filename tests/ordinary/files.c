/* Each thread writes a record into a memory stream with fwrite (weft gives
 * a program no file system), reads it back with fread, writes a line to
 * standard output with write and reads standard input (empty) with read; a
 * table of results is filled under a lock. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define THREADS 2

static pthread_mutex_t results_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t results[THREADS];

static void *round_trip(void *arg)
{
    int id = *(int *)arg;
    char storage[64], text[32], back[32];
    int length = snprintf(text, sizeof text, "payload of thread %d\n", id);
    FILE *stream = fmemopen(storage, sizeof storage, "w+");
    if (!stream)
        return NULL;
    fwrite(text, 1, (size_t)length, stream);
    rewind(stream);
    size_t got = fread(back, 1, (size_t)length, stream);
    fclose(stream);
    write(STDOUT_FILENO, back, got);
    char input[8];
    ssize_t raw = read(STDIN_FILENO, input, sizeof input);
    pthread_mutex_lock(&results_lock);
    results[id] = got + (raw == 0 ? 0 : 1000) + (memcmp(text, back, got) ? 1000 : 0);
    pthread_mutex_unlock(&results_lock);
    return NULL;
}

int main(void)
{
    pthread_t threads[THREADS];
    int ids[THREADS];
    for (int i = 0; i < THREADS; i++) {
        ids[i] = i;
        pthread_create(&threads[i], NULL, round_trip, &ids[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    printf("read back %zu and %zu bytes\n", results[0], results[1]);
    return results[0] == 20 && results[1] == 20 ? 0 : 1;
}
