/*
 * Bita's Gatling example in C, on weft's raw actor imports (weft.h): a
 * Writer, a Terminator and two Actions, dispatched by a small event loop.
 * A Write delivered after the Flush is lost: the Writer answers Error, the
 * Action passes it on, and the driver's CheckForError sees it. With the
 * argument `correct`, actions report done only after their Write was
 * acknowledged.
 */
#include <string.h>
#include "weft.h"

#define DRIVER (-1)

static int correct;
static int writer, terminator;
static int writer_open = 1, remaining = 2, error_seen;

static void send(int to, const char *kind, const char *body, size_t len) {
    weft_abi_actor_send(to, kind, strlen(kind), body, len);
}

static int is(const char *kind, size_t len, const char *want) {
    return len == strlen(want) && memcmp(kind, want, len) == 0;
}

/* Runs the handler of `receiver` for one message. */
static void handle(int receiver, int sender, const char *kind, size_t len, const char *body, size_t body_len) {
    if (receiver == writer) {
        if (is(kind, len, "Write")) {
            send(sender, writer_open ? "Written" : "Error", body, body_len);
        } else if (is(kind, len, "Flush")) {
            writer_open = 0;
            weft_abi_actor_become("closed", 6);
            send(sender, "Flushed", "", 0);
        } else {
            weft_actor_unhandled();
        }
    } else if (receiver == terminator) {
        if (is(kind, len, "ActionDone")) {
            if (--remaining == 0) send(writer, "Flush", "", 0);
        } else if (is(kind, len, "Error")) {
            error_seen = 1;
        } else if (is(kind, len, "CheckForError")) {
            char status = (char)error_seen;
            send(sender, "ErrorStatus", &status, 1);
        } else if (!is(kind, len, "Flushed")) {
            weft_actor_unhandled();
        }
    } else {
        /* An action. */
        if (is(kind, len, "Execute")) {
            send(writer, "Write", "result", 6);
            if (!correct) send(terminator, "ActionDone", "", 0);
        } else if (is(kind, len, "Written")) {
            if (correct) send(terminator, "ActionDone", "", 0);
        } else if (is(kind, len, "Error")) {
            send(terminator, "Error", body, body_len);
        } else {
            weft_actor_unhandled();
        }
    }
}

static char buffer[4096];

/* Delivers messages until none is left, or until a reply to the driver
 * arrives when `awaiting` is an actor; returns the reply's first body byte. */
static int deliver(int awaiting) {
    unsigned header[4];
    while (weft_abi_actor_receive(buffer, sizeof buffer, header, awaiting)) {
        int receiver = (int)header[0], sender = (int)header[1];
        size_t kind_len = header[2], body_len = header[3];
        if (receiver == DRIVER) return buffer[kind_len];
        handle(receiver, sender, buffer, kind_len, buffer + kind_len, body_len);
    }
    return -1;
}

int main(int argc, char **argv) {
    correct = argc > 1 && strcmp(argv[1], "correct") == 0;
    writer = weft_abi_actor_spawn("Writer", 6);
    terminator = weft_abi_actor_spawn("Terminator", 10);
    for (int i = 0; i < 2; i++) {
        int action = weft_abi_actor_spawn("Action", 6);
        send(action, "Execute", "", 0);
    }
    deliver(DRIVER);
    send(terminator, "CheckForError", "", 0);
    int status = deliver(terminator);
    weft_assert(status == 0, "a result was written after the flush");
    return 0;
}
