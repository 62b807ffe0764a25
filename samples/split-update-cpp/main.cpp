// An inventory whose reserve() checks the stock under the lock, then takes
// the lock again to decrement: two buyers can both see the last item.
#include <cassert>
#include <mutex>
#include <thread>

class Inventory {
public:
    explicit Inventory(int stock) : stock_(stock) {}

    bool reserve() {
        int available;
        {
            std::lock_guard<std::mutex> guard(lock_);
            available = stock_;
        }
        if (available == 0)
            return false;
        std::lock_guard<std::mutex> guard(lock_);
        stock_ = available - 1;
        return true;
    }

    int stock() {
        std::lock_guard<std::mutex> guard(lock_);
        return stock_;
    }

private:
    std::mutex lock_;
    int stock_;
};

int main() {
    Inventory shelf(2);
    int sold[2] = {0, 0};
    std::thread a([&] { sold[0] = shelf.reserve(); });
    std::thread b([&] { sold[1] = shelf.reserve(); });
    a.join();
    b.join();
    assert(shelf.stock() == 2 - sold[0] - sold[1] && "a sale was lost");
    return 0;
}
