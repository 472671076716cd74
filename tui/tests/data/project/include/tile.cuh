#pragma once
#define TILE 32
#define ROWS 8
