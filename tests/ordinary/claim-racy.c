/* claim.c with the slot free: the worker's compare-exchange succeeds and
 * writes the slot while main reads it without an atomic. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static _Atomic int slot_owner = 0;

static void *claimer(void *arg)
{
    int expected = 0;
    int claimed = atomic_compare_exchange_strong(&slot_owner, &expected, 2); /* RACE on slot_owner */
    printf("claimed: %d\n", claimed);
    return arg;
}

int main(void)
{
    pthread_t thread;
    pthread_create(&thread, NULL, claimer, NULL);
    int owner = *(int *)&slot_owner; /* RACE on slot_owner */
    pthread_join(thread, NULL);
    printf("owner %d\n", owner);
    return 0;
}
