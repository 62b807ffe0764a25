// C++ threads that print with std::cout (under a mutex) and std::cerr
// (without one), hand work over with a condition variable, and compute with
// std::async.
#include <condition_variable>
#include <future>
#include <iostream>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace {

std::mutex print_mutex;
std::mutex queue_mutex;
std::condition_variable work_ready;
std::queue<int> work;
bool closed = false;

void consume(int id, int &handled)
{
    for (;;) {
        std::unique_lock<std::mutex> lock(queue_mutex);
        work_ready.wait(lock, [] { return closed || !work.empty(); });
        if (work.empty())
            return;
        int item = work.front();
        work.pop();
        lock.unlock();
        handled += item;
        std::lock_guard<std::mutex> print(print_mutex);
        std::cout << "consumer " << id << " took " << item << '\n';
    }
}

int square(int x)
{
    std::cerr << "squaring " << x << std::endl;
    return x * x;
}

} // namespace

int main()
{
    int handled[2] = {0, 0};
    std::vector<std::thread> consumers;
    for (int id = 0; id < 2; id++)
        consumers.emplace_back(consume, id, std::ref(handled[id]));
    for (int item = 1; item <= 3; item++) {
        {
            std::lock_guard<std::mutex> lock(queue_mutex);
            work.push(item);
        }
        work_ready.notify_one();
    }
    {
        std::lock_guard<std::mutex> lock(queue_mutex);
        closed = true;
    }
    work_ready.notify_all();
    auto squared = std::async(std::launch::async, square, 7);
    int result = squared.get();
    for (auto &consumer : consumers)
        consumer.join();
    std::cout << "handled " << handled[0] + handled[1] << ", squared " << result << std::endl;
    return handled[0] + handled[1] == 6 && result == 49 ? 0 : 1;
}
