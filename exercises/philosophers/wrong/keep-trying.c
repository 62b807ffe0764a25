/* Wrong: does not wait for the right fork, it keeps trying it, holding the
 * left one. When everyone holds a left fork, everyone tries forever. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define PHILOSOPHERS 3

static pthread_mutex_t forks[PHILOSOPHERS] = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};
static int meals[PHILOSOPHERS];

/* Philosopher `me` picks up the forks on both sides, eats, and puts them
 * down. */
static void dine(int me) {
    int left = me;
    int right = (me + 1) % PHILOSOPHERS;
    pthread_mutex_lock(&forks[left]);
    while (pthread_mutex_trylock(&forks[right]) != 0) {
        /* The neighbour will be done in a moment. */
    }
    meals[me]++;
    pthread_mutex_unlock(&forks[right]);
    pthread_mutex_unlock(&forks[left]);
}

static void *philosopher(void *arg) {
    dine(*(int *)arg);
    return NULL;
}

int main(void) {
    static int seats[PHILOSOPHERS];
    pthread_t threads[PHILOSOPHERS];
    for (int i = 0; i < PHILOSOPHERS; i++) {
        seats[i] = i;
        pthread_create(&threads[i], NULL, philosopher, &seats[i]);
    }
    for (int i = 0; i < PHILOSOPHERS; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < PHILOSOPHERS; i++)
        assert(meals[i] == 1 && "a philosopher did not eat");
    printf("everyone ate\n");
    return 0;
}
