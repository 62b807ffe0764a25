/* Wrong: never holds two locks, so it cannot deadlock, but between the
 * withdrawal and the deposit the money is in neither account, and the
 * auditor can count it then. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define ACCOUNTS 2
#define START 100
#define AMOUNT 10

struct account {
    pthread_mutex_t lock;
    int balance;
};

static struct account accounts[ACCOUNTS] = {
    {PTHREAD_MUTEX_INITIALIZER, START},
    {PTHREAD_MUTEX_INITIALIZER, START},
};

/* Moves `amount` from one account to the other. Nobody may ever see the
 * money in neither account, or in both. */
static void transfer(struct account *from, struct account *to, int amount) {
    pthread_mutex_lock(&from->lock);
    from->balance -= amount;
    pthread_mutex_unlock(&from->lock);
    pthread_mutex_lock(&to->lock);
    to->balance += amount;
    pthread_mutex_unlock(&to->lock);
}

static void *clerk(void *arg) {
    int from = *(int *)arg;
    transfer(&accounts[from], &accounts[1 - from], AMOUNT);
    return NULL;
}

/* Counts the money, holding both accounts so that none moves meanwhile. */
static void *auditor(void *arg) {
    (void)arg;
    pthread_mutex_lock(&accounts[0].lock);
    pthread_mutex_lock(&accounts[1].lock);
    int total = accounts[0].balance + accounts[1].balance;
    pthread_mutex_unlock(&accounts[1].lock);
    pthread_mutex_unlock(&accounts[0].lock);
    assert(total == ACCOUNTS * START && "the auditor counted the wrong total");
    return NULL;
}

int main(void) {
    static int directions[2] = {0, 1};
    pthread_t clerks[2], audit;
    for (int i = 0; i < 2; i++)
        pthread_create(&clerks[i], NULL, clerk, &directions[i]);
    pthread_create(&audit, NULL, auditor, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(clerks[i], NULL);
    pthread_join(audit, NULL);
    printf("balances: %d %d\n", accounts[0].balance, accounts[1].balance);
    assert(accounts[0].balance + accounts[1].balance == ACCOUNTS * START);
    return 0;
}
