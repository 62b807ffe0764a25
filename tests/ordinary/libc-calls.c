/* Threads that each use the C library's reentrant and thread-safe calls:
 * qsort, strtok_r, snprintf, rand_r, getenv, strerror, pthread_once. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 3

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static int table[8];
static pthread_mutex_t results_lock = PTHREAD_MUTEX_INITIALIZER;
static int checksum;

static void setup(void)
{
    for (int i = 0; i < 8; i++)
        table[i] = 8 - i;
}

static int compare(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

static void *job(void *arg)
{
    unsigned seed = (unsigned)(long)arg;
    pthread_once(&setup_once, setup);
    int mine[8];
    memcpy(mine, table, sizeof mine);
    for (int i = 0; i < 8; i++)
        mine[i] += rand_r(&seed) % 3;
    qsort(mine, 8, sizeof mine[0], compare);
    char line[] = "alpha,beta,gamma";
    char *state, *word;
    int words = 0;
    for (word = strtok_r(line, ",", &state); word; word = strtok_r(NULL, ",", &state))
        words++;
    char message[80];
    const char *home = getenv("HOME");
    snprintf(message, sizeof message, "%d words, %s, home %s", words,
             strerror(ENOMEM), home ? "set" : "unset");
    pthread_mutex_lock(&results_lock);
    checksum += words + (mine[0] <= mine[7]) + (int)(strlen(message) > 10);
    pthread_mutex_unlock(&results_lock);
    return NULL;
}

int main(void)
{
    pthread_t threads[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&threads[i], NULL, job, (void *)(i + 7));
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    printf("checksum %d\n", checksum);
    return checksum == THREADS * 5 ? 0 : 1;
}
