// streams.cpp with the "closed" flag set without the queue's mutex and
// read by the consumers' wait predicate.
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <thread>

namespace {

std::mutex queue_mutex;
std::condition_variable work_ready;
bool closed = false;

void consume()
{
    std::unique_lock<std::mutex> lock(queue_mutex);
    work_ready.wait(lock, [] { return closed; }); // RACE on closed
    std::cout << "consumer saw the queue closed" << std::endl;
}

} // namespace

int main()
{
    std::thread consumer(consume);
    std::cout << "closing" << std::endl;
    closed = true; // RACE on closed
    work_ready.notify_all();
    consumer.join();
    return 0;
}
