/* Reference solution: every philosopher picks up the lower-numbered fork
 * first. The forks are then taken in one order by everyone, so no cycle of
 * philosophers each holding a fork the next one needs can form. */
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
    int first = left < right ? left : right;
    int second = left < right ? right : left;
    pthread_mutex_lock(&forks[first]);
    pthread_mutex_lock(&forks[second]);
    meals[me]++;
    pthread_mutex_unlock(&forks[second]);
    pthread_mutex_unlock(&forks[first]);
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
