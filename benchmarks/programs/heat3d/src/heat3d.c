/*
 * heat3d.c -- seven-point stencil sweeps inside a time loop; every bound
 * is a dataset macro.
 */
#include <heat3d.h>

#define CX 0.125f
#define CY 0.125f
#define CZ 0.125f

void heat3d_run(real_t a[NX][NY][NZ], real_t b[NX][NY][NZ])
{
    int s, x, y, z;

    for (s = 0; s < STEPS; s++) {
        for (x = 1; x < NX - 1; x++)
            for (y = 1; y < NY - 1; y++)
                for (z = 1; z < NZ - 1; z++)
                    b[x][y][z] = a[x][y][z]
                        + CX * (a[x + 1][y][z] - 2.0f * a[x][y][z] + a[x - 1][y][z])
                        + CY * (a[x][y + 1][z] - 2.0f * a[x][y][z] + a[x][y - 1][z])
                        + CZ * (a[x][y][z + 1] - 2.0f * a[x][y][z] + a[x][y][z - 1]);
        for (x = 1; x < NX - 1; x++)
            for (y = 1; y < NY - 1; y++)
                for (z = 1; z < NZ - 1; z++)
                    a[x][y][z] = b[x][y][z]
                        + CX * (b[x + 1][y][z] - 2.0f * b[x][y][z] + b[x - 1][y][z])
                        + CY * (b[x][y + 1][z] - 2.0f * b[x][y][z] + b[x][y - 1][z])
                        + CZ * (b[x][y][z + 1] - 2.0f * b[x][y][z] + b[x][y][z - 1]);
    }
}
