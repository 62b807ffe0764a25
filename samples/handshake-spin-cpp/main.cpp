// A two-party handshake where each side waits for the other to be ready
// before saying it is ready itself: both spin forever, under any schedule.
#include <atomic>
#include <thread>

std::atomic<bool> client_ready{false};
std::atomic<bool> server_ready{false};

int main() {
    std::thread server([] {
        while (!client_ready.load())
            std::this_thread::yield();
        server_ready.store(true);
    });
    std::thread client([] {
        while (!server_ready.load())
            std::this_thread::yield();
        client_ready.store(true);
    });
    server.join();
    client.join();
    return 0;
}
