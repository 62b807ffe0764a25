/* Thread functions as old tutorials declare them: one without a parameter
 * list, one that returns nothing, both given to pthread_create (gcc and
 * clang call them through a `void *(*)(void *)` without complaint). */
#include <pthread.h>
#include <stdio.h>

pthread_mutex_t lock;
int ticks;

void *worker()
{
    pthread_mutex_lock(&lock);
    ticks++;
    printf("worker ticked\n");
    pthread_mutex_unlock(&lock);
    return NULL;
}

void ticker(void *arg)
{
    pthread_mutex_lock(&lock);
    ticks += *(int *)arg;
    pthread_mutex_unlock(&lock);
}

int main()
{
    pthread_t a, b;
    int step = 2;
    pthread_mutex_init(&lock, NULL);
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, (void *(*)(void *))ticker, &step);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("ticks = %d\n", ticks);
    return ticks == 3 ? 0 : 1;
}
