// A loader publishes its result through a plain bool instead of an
// std::atomic<bool>: the reader's check and the loader's store race.
#include <cstdio>
#include <string>
#include <thread>

struct Config {
    std::string name;
    bool loaded = false;
};

int main() {
    Config config;
    std::thread loader([&] {
        config.name = "production";
        config.loaded = true;
    });
    std::thread reader([&] {
        if (config.loaded)
            std::printf("config %s\n", config.name.c_str());
    });
    loader.join();
    reader.join();
    return 0;
}
