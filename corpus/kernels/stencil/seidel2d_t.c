/*
 * In-place Gauss-Seidel (5-point) repeated tsteps times on a global grid.
 * tsteps and gs_n are global integers, read-only in the nest (parameters).
 */
#define GRID 512

int tsteps, gs_n;
double G[GRID][GRID];

void seidel2d_steps(void)
{
    int t, i, j;

    for (t = 0; t < tsteps; t++)
        for (i = 1; i < gs_n - 1; i++)
            for (j = 1; j < gs_n - 1; j++)
                G[i][j] = (G[i - 1][j] + G[i][j - 1] + G[i][j]
                           + G[i][j + 1] + G[i + 1][j]) / 5.0;
}
