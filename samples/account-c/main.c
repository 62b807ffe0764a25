/*
 * AssetFuzzer's Account in C: pthread mutexes, a copy that reads the
 * balances in two critical sections, and credit_interest updating both
 * (access pattern 9). With the argument `correct`, the copy takes the lock
 * once.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "weft.h"

struct balances {
    long checking;
    long savings;
};

struct account {
    pthread_mutex_t lock;
    struct balances b;
};

static struct account x = {PTHREAD_MUTEX_INITIALIZER, {1000, 2000}};
static int correct;

static long get_checking(struct account *a) {
    weft_unit_begin("get_checking");
    pthread_mutex_lock(&a->lock);
    long value = a->b.checking;
    pthread_mutex_unlock(&a->lock);
    weft_unit_end();
    return value;
}

static long get_savings(struct account *a) {
    weft_unit_begin("get_savings");
    pthread_mutex_lock(&a->lock);
    long value = a->b.savings;
    pthread_mutex_unlock(&a->lock);
    weft_unit_end();
    return value;
}

static void copy_account(struct account *to, struct account *from) {
    weft_unit_begin("copy_account");
    if (correct) {
        pthread_mutex_lock(&from->lock);
        to->b = from->b;
        pthread_mutex_unlock(&from->lock);
    } else {
        to->b.checking = get_checking(from);
        to->b.savings = get_savings(from);
    }
    weft_unit_end();
}

static void credit_interest(struct account *a, long percent) {
    weft_unit_begin("credit_interest");
    pthread_mutex_lock(&a->lock);
    a->b.checking += a->b.checking * percent / 100;
    a->b.savings += a->b.savings * percent / 100;
    pthread_mutex_unlock(&a->lock);
    weft_unit_end();
}

static struct account copy = {PTHREAD_MUTEX_INITIALIZER, {0, 0}};

static void *copier(void *arg) {
    (void)arg;
    weft_thread_name("copier");
    copy_account(&copy, &x);
    return 0;
}

static void *creditor(void *arg) {
    (void)arg;
    weft_thread_name("creditor");
    credit_interest(&x, 10);
    return 0;
}

int main(int argc, char **argv) {
    correct = argc > 1 && strcmp(argv[1], "correct") == 0;
    weft_atomic_set("x", &x.b, sizeof x.b);
    pthread_t a, b;
    pthread_create(&a, 0, copier, 0);
    pthread_create(&b, 0, creditor, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    printf("copy total %ld\n", copy.b.checking + copy.b.savings);
    return 0;
}
