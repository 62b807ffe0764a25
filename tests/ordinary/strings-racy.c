/* A thread copies a name into a shared buffer with strcpy while main
 * measures it with strlen: the buffer has no lock. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static char current_name[32] = "nobody";

static void *rename_worker(void *arg)
{
    strcpy(current_name, (const char *)arg); /* RACE on current_name */
    return NULL;
}

int main(void)
{
    static char new_name[32] = "somebody else";
    pthread_t thread;
    pthread_create(&thread, NULL, rename_worker, new_name);
    size_t length = strlen(current_name); /* RACE on current_name */
    pthread_join(thread, NULL);
    printf("name was %zu bytes long\n", length);
    return 0;
}
