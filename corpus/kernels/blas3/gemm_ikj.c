/* gemm, ikj order on fixed-size float matrices: unit-stride inner loop on B and C. */
#define NI 64
#define NJ 80
#define NK 72

void gemm_ikj(float C[NI][NJ], float A[NI][NK], float B[NK][NJ])
{
    int i, j, k;

    for (i = 0; i < NI; i = i + 1)
        for (k = 0; k < NK; k = k + 1)
            for (j = 0; j < NJ; j = j + 1)
                C[i][j] += A[i][k] * B[k][j];
}
