// A consumer waits on a condition variable without checking the condition
// first: when the producer's notify comes before the wait, it waits forever.
#include <condition_variable>
#include <mutex>
#include <thread>

std::mutex lock;
std::condition_variable ready_changed;
bool ready = false;

int main() {
    std::thread consumer([] {
        std::unique_lock<std::mutex> guard(lock);
        ready_changed.wait(guard);
    });
    std::thread producer([] {
        std::lock_guard<std::mutex> guard(lock);
        ready = true;
        ready_changed.notify_one();
    });
    producer.join();
    consumer.join();
    return ready ? 0 : 1;
}
