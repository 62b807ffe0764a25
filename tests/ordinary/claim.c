/* A worker tries to claim a slot that main already holds: its
 * compare-exchange fails, so it writes nothing, and main reads the slot
 * without an atomic at the same time. A failed compare-exchange is a read
 * (C11 7.17.7.4), and two reads do not race. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static _Atomic int slot_owner = 1; /* main holds the slot from the start */

static void *claimer(void *arg)
{
    int expected = 0;
    int claimed = atomic_compare_exchange_strong(&slot_owner, &expected, 2);
    printf("claimed: %d, owner was %d\n", claimed, expected);
    return arg;
}

int main(void)
{
    pthread_t thread;
    pthread_create(&thread, NULL, claimer, NULL);
    int owner = *(int *)&slot_owner; /* a plain read */
    pthread_join(thread, NULL);
    printf("owner %d\n", owner);
    return owner == 1 ? 0 : 1;
}
