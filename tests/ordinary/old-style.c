/* C as old textbooks write it: main with no return type, K&R parameter
 * lists, a thread function declared without a prototype. */
#include <pthread.h>
#include <stdio.h>

int counter;
pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void *count(arg)
    void *arg;
{
    int times = *(int *)arg;
    int i;
    for (i = 0; i < times; i++) {
        pthread_mutex_lock(&lock);
        counter++;
        pthread_mutex_unlock(&lock);
    }
    return 0;
}

int add(a, b)
    int a, b;
{
    return a + b;
}

main()
{
    pthread_t t1, t2;
    int times = 3;
    pthread_create(&t1, 0, count, &times);
    pthread_create(&t2, 0, count, &times);
    pthread_join(t1, 0);
    pthread_join(t2, 0);
    printf("counter = %d\n", add(counter, 0));
    return counter != 6;
}
