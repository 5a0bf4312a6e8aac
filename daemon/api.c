#include "strlist.h"
