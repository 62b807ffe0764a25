/* A thread reads a record from a memory stream into a shared buffer with
 * fread, and main reads the buffer while the thread may still be writing
 * it: the buffer has no lock. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static char shared_buffer[32];
static char record[] = "some input\n";

static void *loader(void *arg)
{
    (void)arg;
    FILE *in = fmemopen(record, sizeof record - 1, "r");
    if (!in)
        return NULL;
    char local[32] = {0};
    fread(local, 1, sizeof local - 1, in);
    fclose(in);
    memcpy(shared_buffer, local, sizeof local); /* RACE on shared_buffer */
    return NULL;
}

int main(void)
{
    pthread_t thread;
    pthread_create(&thread, NULL, loader, NULL);
    char first = shared_buffer[0]; /* RACE on shared_buffer */
    pthread_join(thread, NULL);
    printf("first byte %d\n", first);
    return 0;
}
