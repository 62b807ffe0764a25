/* A program whose main returns nothing, as many textbooks write it. */
#include <pthread.h>
#include <stdio.h>

static int done;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *finish(void *arg)
{
    pthread_mutex_lock(&lock);
    done = 1;
    pthread_mutex_unlock(&lock);
    return arg;
}

void main()
{
    pthread_t thread;
    pthread_create(&thread, NULL, finish, NULL);
    pthread_join(thread, NULL);
    printf("done = %d\n", done);
}
