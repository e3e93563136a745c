/*
 * 2-D FDTD (Yee scheme): ey, ex and hz updated in turn every time step, with a source row from
 * fict (double).
 */
void fdtd2d_f64(int tsteps, int nx, int ny, double ex[nx][ny], double ey[nx][ny],
                double hz[nx][ny], double fict[tsteps])
{
    for (int t = 0; t < tsteps; t++) {
        for (int j = 0; j < ny; j++)
            ey[0][j] = fict[t];
        for (int i = 1; i < nx; i++)
            for (int j = 0; j < ny; j++)
                ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
        for (int i = 0; i < nx; i++)
            for (int j = 1; j < ny; j++)
                ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
        for (int i = 0; i < nx - 1; i++)
            for (int j = 0; j < ny - 1; j++)
                hz[i][j] = hz[i][j] - 0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
    }
}
