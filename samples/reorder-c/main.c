/* A configuration of two fields that setters change together: every setter
 * stores `low` and then `high`, each with its own atomic store, and a
 * checker reads both and expects a pair some setter wrote (or the initial
 * one). Ten setters run before the checker; it sees a torn pair only when
 * it reads between some setter's two stores, and both reads fall in that
 * gap: a bug that gets rarer the more setters there are for a walk that
 * picks threads step by step. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define SETTERS 10

static atomic_int low;
static atomic_int high;

static void *setter(void *arg) {
    (void)arg;
    atomic_store(&low, 1);
    atomic_store(&high, -1);
    return NULL;
}

static void *checker(void *arg) {
    (void)arg;
    int l = atomic_load(&low);
    int h = atomic_load(&high);
    if (!((l == 0 && h == 0) || (l == 1 && h == -1))) {
        printf("torn configuration: low %d, high %d\n", l, h);
        assert(0 && "the checker saw half of an update");
    }
    return NULL;
}

int main(void) {
    pthread_t setters[SETTERS], check;
    for (int i = 0; i < SETTERS; i++)
        pthread_create(&setters[i], NULL, setter, NULL);
    pthread_create(&check, NULL, checker, NULL);
    for (int i = 0; i < SETTERS; i++)
        pthread_join(setters[i], NULL);
    pthread_join(check, NULL);
    return 0;
}
