#include "hook.h"
