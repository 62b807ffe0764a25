/* A program that waits for a signal only a terminal or another process
 * could send (Ctrl-C): weft says so instead of hanging. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static void on_interrupt(int sig) {
    (void)sig;
}

int main(void) {
    signal(SIGINT, on_interrupt);
    puts("press Ctrl-C to go on");
    pause();
    return 0;
}
