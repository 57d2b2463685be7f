// Raw little-endian tensor files for the kernel-launch runners (the samples' gen_data.py / data_utils.h convention:
// tensors as ndarray.tofile() bytes). Every failure is reported; nothing is silently short.
#ifndef LOSSGRAD_BIN_IO_H_
#define LOSSGRAD_BIN_IO_H_

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

inline bool LgReadFile(const char* path, std::vector<uint8_t>* out)
{
    std::FILE* f = std::fopen(path, "rb");
    if (f == nullptr) {
        std::fprintf(stderr, "[lossgrad] cannot open %s: %s\n", path, std::strerror(errno));
        return false;
    }
    out->clear();
    uint8_t chunk[65536];
    size_t n = 0;
    while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0) {
        out->insert(out->end(), chunk, chunk + n);
    }
    const bool ok = std::ferror(f) == 0;
    std::fclose(f);
    if (!ok) {
        std::fprintf(stderr, "[lossgrad] read error on %s\n", path);
    }
    return ok;
}

inline bool LgWriteFile(const char* path, const void* data, size_t n)
{
    std::FILE* f = std::fopen(path, "wb");
    if (f == nullptr) {
        std::fprintf(stderr, "[lossgrad] cannot create %s: %s\n", path, std::strerror(errno));
        return false;
    }
    const bool ok = (n == 0 || std::fwrite(data, 1, n, f) == n) && std::fclose(f) == 0;
    if (!ok) {
        std::fprintf(stderr, "[lossgrad] write error on %s\n", path);
    }
    return ok;
}

inline bool LgParseU64(const char* text, uint64_t* out)
{
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0') {
        std::fprintf(stderr, "[lossgrad] not a non-negative integer: %s\n", text);
        return false;
    }
    *out = static_cast<uint64_t>(v);
    return true;
}

#endif // LOSSGRAD_BIN_IO_H_
