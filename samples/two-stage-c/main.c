/* Publishing in two steps. Thirty writers each set `first` under one lock,
 * then, in a second critical section, set `second` from it under another.
 * The reader, created last, assumes that once `first` is set, `second`
 * agrees with it. It does not when the reader runs after some writer's
 * first step and before every writer's second one. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define WRITERS 30

static pthread_mutex_t first_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t second_lock = PTHREAD_MUTEX_INITIALIZER;
static int first;
static int second;

static void *writer(void *arg) {
    (void)arg;
    pthread_mutex_lock(&first_lock);
    first = 1;
    pthread_mutex_unlock(&first_lock);

    pthread_mutex_lock(&first_lock);
    int seen = first;
    pthread_mutex_unlock(&first_lock);
    pthread_mutex_lock(&second_lock);
    second = seen + 1;
    pthread_mutex_unlock(&second_lock);
    return NULL;
}

static void *reader(void *arg) {
    (void)arg;
    pthread_mutex_lock(&first_lock);
    int seen_first = first;
    pthread_mutex_unlock(&first_lock);
    if (seen_first == 0)
        return NULL;
    pthread_mutex_lock(&second_lock);
    int seen_second = second;
    pthread_mutex_unlock(&second_lock);
    assert(seen_second == seen_first + 1 && "the two stages are out of step");
    return NULL;
}

int main(void) {
    pthread_t writers[WRITERS], check;
    for (int i = 0; i < WRITERS; i++)
        pthread_create(&writers[i], NULL, writer, NULL);
    pthread_create(&check, NULL, reader, NULL);
    for (int i = 0; i < WRITERS; i++)
        pthread_join(writers[i], NULL);
    pthread_join(check, NULL);
    printf("first = %d, second = %d\n", first, second);
    return 0;
}
