/* Dining philosophers: three philosophers sit around a table with one fork
 * between each two of them. To eat, a philosopher needs both forks next to
 * them. This program sometimes hangs.
 * Make dine() correct. Keep philosopher() and main() as they are. */
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
    /* TODO: what if everyone picks up their left fork at once? */
    pthread_mutex_lock(&forks[left]);
    pthread_mutex_lock(&forks[right]);
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
