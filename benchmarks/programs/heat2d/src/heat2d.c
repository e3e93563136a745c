/*
 * heat2d.c -- five-point explicit heat stencil with a time loop around
 * two sweeps, u into v and back.
 */
#include <heat2d.h>

void kernel_heat2d(int tsteps, int n, double u[N][N], double v[N][N])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                v[i][j] = u[i][j] + HEAT_NU * (u[i - 1][j] + u[i + 1][j]
                                               + u[i][j - 1] + u[i][j + 1]
                                               - 4.0 * u[i][j]);
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                u[i][j] = v[i][j] + HEAT_NU * (v[i - 1][j] + v[i + 1][j]
                                               + v[i][j - 1] + v[i][j + 1]
                                               - 4.0 * v[i][j]);
    }
}
