/* buffers.c with a reader that prints the board without taking its
 * lock. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define WRITERS 2
#define READERS 2

static char board[64] = "empty";
static unsigned notices;
static pthread_mutex_t board_lock = PTHREAD_MUTEX_INITIALIZER;

static void *writer(void *arg)
{
    int id = (int)(long)arg;
    char notice[64];
    snprintf(notice, sizeof notice, "notice %d from writer %d", id * 10, id);
    pthread_mutex_lock(&board_lock);
    if (strcmp(board, notice) != 0) { /* RACE on board */
        strcpy(board, notice); /* RACE on board */
        notices++;
    }
    pthread_mutex_unlock(&board_lock);
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    printf("the board says: %s\n", board); /* RACE on board */
    return NULL;
}

int main(void)
{
    pthread_t threads[WRITERS + READERS];
    for (long i = 0; i < WRITERS; i++)
        pthread_create(&threads[i], NULL, writer, (void *)(i + 1));
    for (long i = 0; i < READERS; i++)
        pthread_create(&threads[WRITERS + i], NULL, reader, NULL);
    for (int i = 0; i < WRITERS + READERS; i++)
        pthread_join(threads[i], NULL);
    printf("%u notices, last: %s\n", notices, board);
    return 0;
}
