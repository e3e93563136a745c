/*
 * 3-D (volumetric) single-channel convolution (float).
 */
void conv3d_f32(int nz, int ny, int nx, int kz, int ky, int kx,
                float in[nz + kz][ny + ky][nx + kx], float w[kz][ky][kx], float out[nz][ny][nx])
{
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++)
                for (int a = 0; a < kz; a++)
                    for (int b = 0; b < ky; b++)
                        for (int c = 0; c < kx; c++)
                            out[z][y][x] += w[a][b][c] * in[z + a][y + b][x + c];
}
