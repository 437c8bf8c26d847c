#include "config.h"
#include <stdint.h>
#include <stddef.h>
int main(void) { return 0; }
